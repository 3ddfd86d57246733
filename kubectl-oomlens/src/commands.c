/* SPDX-License-Identifier: Apache-2.0 */
/* kubectl-oomlens: the table of commands (name, alias, usage, the options
 * each takes, how many operands, the function that runs it) and the help
 * printed from it; main.c parses against it, complete.c completes from
 * it. */
#include <stdio.h>

#include "plugin.h"
#include "base/util.h"

/* The command-only ones first, in the order a refusal names them. */
const struct plugin_option plugin_options[] = {
	{"all-namespaces", 'A', false, T_ALL, false},
	{"selector", 'l', true, T_SELECTOR, false},
	{"pod", O_POD, true, T_POD, false},
	{"since", O_SINCE, true, T_SINCE, false},
	{"output", 'o', true, T_OUTPUT, false},
	{"extract", O_EXTRACT, true, T_EXTRACT, false},
	{"kubeconfig", O_KUBECONFIG, true, 0, false},
	{"context", O_CONTEXT, true, 0, false},
	{"namespace", 'n', true, 0, false},
	{"request-timeout", O_TIMEOUT, true, 0, false},
	{"as", O_AS, true, 0, false},
	{"as-group", O_AS_GROUP, true, 0, false},
	{"help", 'h', false, 0, false},
	{"version", O_VERSION, false, 0, true},
};
const size_t plugin_n_options = ARRAY_SIZE(plugin_options);

static const char globals[] =
	"global options (every command): --kubeconfig FILE, --context NAME,\n"
	"  -n/--namespace NS, --request-timeout 30s (0: none), --as USER,\n"
	"  --as-group GROUP (repeatable, with --as), -h/--help\n";

static const struct command commands[] = {
	{"list", NULL,
	 "list [-n NS | -A] [-l SELECTOR] [--pod P] [--since 24h] "
	 "[-o json|yaml|wide|name]",
	 "the OOM reports, newest first, like kubectl get",
	 T_ALL | T_SELECTOR | T_POD | T_SINCE | T_OUTPUT, 0, 0, cmd_list},
	{"get", NULL,
	 "get [REPORT...] [-n NS | -A] [-l SELECTOR] [-o json|yaml|wide|name]",
	 "the named reports, as list prints them; none named: every one",
	 T_ALL | T_SELECTOR | T_OUTPUT, 0, 64, cmd_get},
	{"show", NULL, "show REPORT",
	 "verdict, evidence, ledger, the kernel's victim line, what to change",
	 0, 1, 1, cmd_show},
	{"download", "save", "download REPORT [FILE|-] [--extract DIR]",
	 "the bundle, sha256 and size checked, to FILE and/or DIR/REPORT/",
	 T_EXTRACT, 1, 2, cmd_download},
	{"open", NULL, "open REPORT",
	 "the bundle in a temporary directory, its page in the browser", 0, 1,
	 1, cmd_open},
	{"describe", NULL, "describe pod POD", "a pod's reports, newest first",
	 0, 2, 2, cmd_describe},
};

bool plugin_output_format(const char *out)
{
	return streq(out, "json") || streq(out, "yaml") || streq(out, "wide") ||
	       streq(out, "name");
}

const struct command *plugin_commands(size_t *n)
{
	*n = ARRAY_SIZE(commands);
	return commands;
}

const struct command *plugin_command(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(commands); i++)
		if (streq(name, commands[i].name) ||
		    (commands[i].alias && streq(name, commands[i].alias)))
			return &commands[i];
	return NULL;
}

void plugin_usage(FILE *f)
{
	fputs("usage: kubectl oomlens COMMAND [options]\n\ncommands:\n", f);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %s\n      %s\n", commands[i].usage,
			commands[i].summary);
	fprintf(f,
		"\n%s"
		"exit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 forbidden "
		"or\n  unauthorized, 5 bundle damaged or refused\n"
		"`kubectl oomlens COMMAND --help` for one command.\n",
		globals);
}

void plugin_command_usage(const struct command *cmd, FILE *f)
{
	fprintf(f, "usage: kubectl oomlens %s\n  %s\n", cmd->usage,
		cmd->summary);
	if (cmd->alias)
		fprintf(f, "  (also: kubectl oomlens %s)\n", cmd->alias);
	fprintf(f, "\n%s", globals);
}
