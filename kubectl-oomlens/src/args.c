/* SPDX-License-Identifier: Apache-2.0 */
/* kubectl-oomlens: the command line parsed as kubectl parses it, with
 * getopt_long over plugin_options (commands.c). One parser for the
 * commands and for completion: what `kubectl oomlens -nfoo show <TAB>`
 * lists names from is what `kubectl oomlens -nfoo show x` reads. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "plugin.h"
#include "base/parse.h"
#include "base/util.h"

struct tables {
	struct option longopts[32];
	char shortopts[64];
};

static void tables_make(struct tables *t)
{
	size_t k = 0;

	memset(t, 0, sizeof(*t));
	t->shortopts[k++] = ':'; /* a missing value is ':', not '?' */
	for (size_t i = 0; i < plugin_n_options; i++) {
		const struct plugin_option *p = &plugin_options[i];

		t->longopts[i] = (struct option){
			p->name, p->value ? required_argument : no_argument,
			NULL, p->val};
		if (p->val < 256) {
			t->shortopts[k++] = (char)p->val;
			if (p->value)
				t->shortopts[k++] = ':';
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

/* "OPT: expected WHAT, got 'ARG'" into e; -EINVAL. */
static int refuse(struct plugin_args_error *e, const char *opt,
		  const char *what, const char *arg)
{
	snprintf(e->why, sizeof(e->why), "%s: expected %s, got '%s'", opt, what,
		 arg);
	return -EINVAL;
}

/* The options of every command, and -h/--version; 1 when ch is none. */
static int take_global(struct opts *o, int ch, const char *arg,
		       struct plugin_args_error *e)
{
	switch (ch) {
	case O_KUBECONFIG:
		o->kubeconfig = arg;
		return 0;
	case O_CONTEXT:
		o->context = arg;
		return 0;
	case 'n':
		o->namespace = arg;
		return 0;
	case O_TIMEOUT:
		if (parse_timeout(arg, &o->timeout_ms) == 0)
			return 0;
		return refuse(e, "--request-timeout",
			      "0, seconds or a duration such as 30s or 2m",
			      arg);
	case O_AS:
		o->as_user = arg;
		return 0;
	case O_AS_GROUP:
		if (o->n_as_groups < ARRAY_SIZE(o->as_groups)) {
			o->as_groups[o->n_as_groups++] = arg;
			return 0;
		}
		snprintf(e->why, sizeof(e->why),
			 "--as-group: at most 8, got more (%s)", arg);
		return -EINVAL;
	case 'h':
		o->help = true;
		return 0;
	case O_VERSION:
		o->version = true;
		return 0;
	}
	return 1;
}

/* One option; *taken gets the T_ bit of a command-only one. */
static int take(struct opts *o, int ch, const char *arg, unsigned *taken,
		struct plugin_args_error *e)
{
	int r = take_global(o, ch, arg, e);

	if (r <= 0)
		return r;
	switch (ch) {
	case 'A':
		o->all_namespaces = true;
		*taken |= T_ALL;
		return 0;
	case 'l':
		o->selector = arg;
		*taken |= T_SELECTOR;
		return 0;
	case 'o':
		o->output = arg;
		*taken |= T_OUTPUT;
		return 0;
	case O_POD:
		o->pod = arg;
		*taken |= T_POD;
		return 0;
	case O_SINCE:
		*taken |= T_SINCE;
		if (cli_parse_duration(arg, &o->since_s) == 0)
			return 0;
		return refuse(e, "--since",
			      "a duration such as 90s, 15m, 24h or 7d", arg);
	case O_EXTRACT:
		o->extract = arg;
		*taken |= T_EXTRACT;
		return 0;
	}
	return -EINVAL;
}

int plugin_parse_args(int argc, char **argv, bool lenient, struct opts *o,
		      unsigned *taken, struct plugin_args_error *e)
{
	struct tables t;
	int ch;

	tables_make(&t);
	opterr = 0;
	optind = 0; /* glibc: 0 starts over, forgetting a previous scan */
	while ((ch = getopt_long(argc, argv, t.shortopts, t.longopts, NULL)) !=
	       -1) {
		const char *spelled = argv[optind - 1];

		if (ch == '?' && !lenient) {
			if (optopt)
				snprintf(e->why, sizeof(e->why),
					 "unknown option -%c", optopt);
			else
				snprintf(e->why, sizeof(e->why),
					 "unknown option %s", spelled);
			return -EINVAL;
		}
		if (ch == ':' && !lenient) {
			snprintf(e->why, sizeof(e->why), "%s needs a value",
				 spelled);
			return -EINVAL;
		}
		if (ch != '?' && ch != ':' &&
		    take(o, ch, optarg, taken, e) < 0 && !lenient)
			return -EINVAL;
	}
	o->argv = argv + optind;
	o->argc = argc - optind;
	if (o->n_as_groups && !o->as_user && !lenient) {
		snprintf(e->why, sizeof(e->why), "--as-group needs --as");
		return -EINVAL;
	}
	return 0;
}
