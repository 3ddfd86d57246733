/* SPDX-License-Identifier: Apache-2.0 */
/* kubectl-oomlens: read and download oomlens' OOM reports, as a kubectl
 * plugin (`kubectl oomlens list`) or on its own. Credentials come from the
 * kubeconfig exactly as kubectl finds them (--kubeconfig, $KUBECONFIG,
 * ~/.kube/config; --context; -n), then from the in-cluster service
 * account. Options may come anywhere and in every form kubectl takes
 * (`-n ns`, `-nns`, `--namespace ns`, `--namespace=ns`); an option the
 * command does not take is refused, never ignored. */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "plugin.h"
#include "base/util.h"

#ifndef OOMLENS_VERSION
#define OOMLENS_VERSION "0.0.0"
#endif

/* A bad command line: what is wrong, then where to look. */
static int usage_error(const struct command *cmd, const char *fmt, ...)
	_printf_(2, 3);
static int usage_error(const struct command *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("kubectl-oomlens: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (cmd)
		fprintf(stderr, "\nusage: kubectl oomlens %s\n", cmd->usage);
	else
		fputs("\n`kubectl oomlens --help` lists the commands and their "
		      "options.\n",
		      stderr);
	return EXIT_USAGE;
}

/* What a command does not take, said with what it does. */
static int refuse_foreign(const struct command *cmd, unsigned taken)
{
	for (size_t i = 0; i < plugin_n_options; i++) {
		const struct plugin_option *p = &plugin_options[i];
		char letter[4] = "";

		if (!(taken & p->takes) || (cmd->takes & p->takes))
			continue;
		if (p->val < 256)
			snprintf(letter, sizeof(letter), "-%c/", p->val);
		if (!streq(cmd->name, "get") || p->takes != T_EXTRACT)
			return usage_error(cmd, "%s does not take %s--%s",
					   cmd->name, letter, p->name);
		/* the download that `get` was before */
		fprintf(stderr, "kubectl-oomlens: get does not take --%s\n",
			p->name);
		plugin_hint_download();
		return EXIT_USAGE;
	}
	return 0;
}

/* --help, -h, `help [COMMAND]`, on stdout. */
static int help(const struct opts *o, const struct command *cmd)
{
	if (!cmd && o->argc > 1)
		cmd = plugin_command(o->argv[1]);
	if (cmd)
		plugin_command_usage(cmd, stdout);
	else
		plugin_usage(stdout);
	return EXIT_OK;
}

/* The command line against the command's table row: 0 or an exit code. */
static int check_command(const struct command *cmd, const struct opts *o,
			 unsigned taken)
{
	int rc, n = o->argc - 1;

	if ((rc = refuse_foreign(cmd, taken)))
		return rc;
	if (o->output && !plugin_output_format(o->output)) {
		if (streq(cmd->name, "get")) { /* `get REPORT -o FILE` was */
			fprintf(stderr,
				"kubectl-oomlens: -o is an output format "
				"(json, yaml, wide or name), not a file\n");
			plugin_hint_download();
			return EXIT_USAGE;
		}
		return usage_error(cmd,
				   "-o: expected json, yaml, wide or name, got "
				   "'%s'",
				   o->output);
	}
	if (n < cmd->min_args)
		return usage_error(cmd, "%s: too few operands", cmd->name);
	if (n > cmd->max_args)
		return usage_error(cmd, "%s: unexpected operand '%s'",
				   cmd->name, o->argv[1 + cmd->max_args]);
	/* kubectl get's two refusals */
	if (n && o->all_namespaces)
		return usage_error(cmd,
				   "%s: a report cannot be retrieved by "
				   "name across all namespaces",
				   cmd->name);
	if (n && o->selector)
		return usage_error(cmd,
				   "%s: a name cannot be given with a "
				   "selector (-l)",
				   cmd->name);
	return 0;
}

int main(int argc, char **argv)
{
	struct ctx c = {0};
	struct plugin_args_error e = {{0}};
	const struct command *cmd;
	unsigned taken = 0;
	int rc;

	/* kubectl_complete-oomlens: the words typed, the last one partial;
	 * "__complete" stands where a program's name goes */
	if (argc > 1 && streq(argv[1], "__complete"))
		return plugin_complete(argc - 1, argv + 1);
	if (plugin_parse_args(argc, argv, false, &c.o, &taken, &e) < 0)
		return usage_error(NULL, "%s", e.why);
	if (c.o.version || (c.o.argc >= 1 && streq(c.o.argv[0], "version"))) {
		printf("kubectl-oomlens %s\n", OOMLENS_VERSION);
		return EXIT_OK;
	}
	cmd = c.o.argc ? plugin_command(c.o.argv[0]) : NULL;
	if (c.o.help || (c.o.argc && streq(c.o.argv[0], "help")))
		return help(&c.o, cmd);
	if (!c.o.argc) {
		plugin_usage(stderr);
		return EXIT_USAGE;
	}
	if (!cmd)
		return usage_error(NULL, "unknown command '%s'", c.o.argv[0]);
	if ((rc = check_command(cmd, &c.o, taken)))
		return rc;
	c.cmd = cmd;
	rc = plugin_client(&c);
	if (rc == 0)
		rc = cmd->fn(&c);
	kube_client_free(c.client);
	return rc;
}
