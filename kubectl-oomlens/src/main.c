/* SPDX-License-Identifier: Apache-2.0 */
/* kubectl-oomlens: read and download oomlens' OOM reports, as a kubectl
 * plugin (`kubectl oomlens list`) or on its own. Credentials come from the
 * kubeconfig exactly as kubectl finds them (--kubeconfig, $KUBECONFIG,
 * ~/.kube/config; --context; -n), then from the in-cluster service
 * account. Options may come anywhere and in every form kubectl takes
 * (`-n ns`, `-nns`, `--namespace ns`, `--namespace=ns`); an option the
 * command does not take is refused, never ignored. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "plugin.h"
#include "base/parse.h"
#include "base/util.h"

#ifndef OOMLENS_VERSION
#define OOMLENS_VERSION "0.0.0"
#endif

/* getopt_long's tables, made from plugin_options once. */
static struct option longopts[32];
static char shortopts[32];

static void getopt_tables(void)
{
	size_t k = 0;

	shortopts[k++] = ':'; /* a missing value is ':', not '?' */
	for (size_t i = 0; i < plugin_n_options; i++) {
		const struct plugin_option *p = &plugin_options[i];

		longopts[i] = (struct option){
			p->name, p->value ? required_argument : no_argument,
			NULL, p->val};
		if (p->val < 256) {
			shortopts[k++] = (char)p->val;
			if (p->value)
				shortopts[k++] = ':';
		}
	}
}

/* kubectl's --request-timeout: "0" (none), a bare number of seconds, or
 * a duration ("30s", "2m", "1h30m"). */
static int parse_timeout(const char *s, uint32_t *ret_ms)
{
	uint64_t v;

	if (parse_u64(s, &v) < 0 && cli_parse_duration(s, &v) < 0)
		return -EINVAL;
	*ret_ms = v == 0 || v > UINT32_MAX / 1000 ? UINT32_MAX
						  : (uint32_t)(v * 1000);
	return 0;
}

static int bad(const char *fmt, ...) _printf_(1, 2);
static int bad(const char *fmt, ...)
{
	va_list ap;

	fputs("kubectl-oomlens: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

/* One option; *taken gets its T_ bit. */
static int take(struct opts *o, int ch, const char *arg, unsigned *taken)
{
	switch (ch) {
	case O_KUBECONFIG:
		o->kubeconfig = arg;
		break;
	case O_CONTEXT:
		o->context = arg;
		break;
	case 'n':
		o->namespace = arg;
		break;
	case O_TIMEOUT:
		if (parse_timeout(arg, &o->timeout_ms) < 0)
			return bad("--request-timeout: expected 0, seconds or "
				   "a duration such as 30s or 2m, got '%s'",
				   arg);
		break;
	case O_AS:
		o->as_user = arg;
		break;
	case O_AS_GROUP:
		if (o->n_as_groups == ARRAY_SIZE(o->as_groups))
			return bad("--as-group: at most 8, got more (%s)", arg);
		o->as_groups[o->n_as_groups++] = arg;
		break;
	case 'A':
		o->all_namespaces = true;
		*taken |= T_ALL;
		break;
	case 'l':
		o->selector = arg;
		*taken |= T_SELECTOR;
		break;
	case 'o':
		o->output = arg;
		*taken |= T_OUTPUT;
		break;
	case O_POD:
		o->pod = arg;
		*taken |= T_POD;
		break;
	case O_SINCE:
		if (cli_parse_duration(arg, &o->since_s) < 0)
			return bad("--since: expected a duration such as 90s, "
				   "15m, 24h or 7d, got '%s'",
				   arg);
		*taken |= T_SINCE;
		break;
	case O_EXTRACT:
		o->extract = arg;
		*taken |= T_EXTRACT;
		break;
	case 'h':
		o->help = true;
		break;
	case O_VERSION:
		o->version = true;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/* Options anywhere (getopt_long permutes), operands in order into
 * o->argv; unknown options and missing values refused. *taken: the
 * command-specific options given. */
static int parse_args(int argc, char **argv, struct opts *o, unsigned *taken)
{
	int ch;

	opterr = 0;
	optind = 1;
	getopt_tables();
	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) !=
	       -1) {
		const char *spelled = argv[optind - 1];

		if (ch == '?')
			return optopt ? bad("unknown option -%c", optopt)
				      : bad("unknown option %s", spelled);
		if (ch == ':')
			return bad("%s needs a value", spelled);
		if (take(o, ch, optarg, taken) < 0)
			return -EINVAL;
	}
	o->argv = argv + optind;
	o->argc = argc - optind;
	if (o->n_as_groups && !o->as_user)
		return bad("--as-group needs --as");
	return 0;
}

/* What a command does not take, said with what it does. */
static int refuse_foreign(const struct command *cmd, unsigned taken)
{
	for (size_t i = 0; i < plugin_n_options; i++) {
		const struct plugin_option *p = &plugin_options[i];

		if (!(taken & p->takes) || (cmd->takes & p->takes))
			continue;
		fprintf(stderr, "kubectl-oomlens: %s does not take ",
			cmd->name);
		if (p->val < 256)
			fprintf(stderr, "-%c/", p->val);
		fprintf(stderr, "--%s\n", p->name);
		/* the download that `get` was before */
		if (streq(cmd->name, "get") && p->takes == T_EXTRACT)
			plugin_hint_download();
		else
			fprintf(stderr, "usage: kubectl oomlens %s\n",
				cmd->usage);
		return EXIT_USAGE;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ctx c = {0};
	const struct command *cmd;
	unsigned taken = 0;
	int rc;

	/* kubectl_complete-oomlens: the words typed, the last one partial */
	if (argc > 1 && streq(argv[1], "__complete"))
		return plugin_complete(argc - 2, argv + 2);
	if (parse_args(argc, argv, &c.o, &taken) < 0) {
		fputs("`kubectl oomlens --help` lists the commands and their "
		      "options.\n",
		      stderr);
		return EXIT_USAGE;
	}
	if (c.o.version || (c.o.argc >= 1 && streq(c.o.argv[0], "version"))) {
		printf("kubectl-oomlens %s\n", OOMLENS_VERSION);
		return EXIT_OK;
	}
	cmd = c.o.argc ? plugin_command(c.o.argv[0]) : NULL;
	if (c.o.help || (c.o.argc && streq(c.o.argv[0], "help"))) {
		if (!cmd && c.o.argc > 1)
			cmd = plugin_command(c.o.argv[1]);
		if (cmd)
			plugin_command_usage(cmd, stdout);
		else
			plugin_usage(stdout);
		return EXIT_OK;
	}
	if (!c.o.argc) {
		plugin_usage(stderr);
		return EXIT_USAGE;
	}
	if (!cmd) {
		fprintf(stderr, "kubectl-oomlens: unknown command '%s'\n",
			c.o.argv[0]);
		plugin_usage(stderr);
		return EXIT_USAGE;
	}
	if ((rc = refuse_foreign(cmd, taken)))
		return rc;
	if (c.o.output && !plugin_output_format(c.o.output)) {
		fprintf(stderr,
			"kubectl-oomlens: -o: expected json, yaml, wide or "
			"name, got '%s'\n",
			c.o.output);
		if (streq(cmd->name, "get")) /* `get REPORT -o FILE` was */
			plugin_hint_download();
		return EXIT_USAGE;
	}
	if (c.o.argc - 1 < cmd->min_args || c.o.argc - 1 > cmd->max_args) {
		fprintf(stderr, "usage: kubectl oomlens %s\n", cmd->usage);
		return EXIT_USAGE;
	}
	c.cmd = cmd;
	rc = plugin_client(&c);
	if (rc == 0)
		rc = cmd->fn(&c);
	kube_client_free(c.client);
	return rc;
}
