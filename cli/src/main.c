/* SPDX-License-Identifier: Apache-2.0 */
/* kubectl-oomlens: read and download oomlens' OOM reports, as a kubectl
 * plugin (`kubectl oomlens list`) or on its own. Credentials come from the
 * kubeconfig exactly as kubectl finds them (--kubeconfig, $KUBECONFIG,
 * ~/.kube/config; --context; -n), then from the in-cluster service
 * account. Options may come anywhere, as with kubectl. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "base/util.h"

#ifndef OOMLENS_VERSION
#define OOMLENS_VERSION "0.0.0"
#endif

static const char usage[] =
	"usage: kubectl oomlens COMMAND [options]\n"
	"\n"
	"commands:\n"
	"  list [-n NS | -A] [--pod P] [--since 24h] [-o json|yaml|wide]\n"
	"                         the OOM reports, like kubectl get\n"
	"  show REPORT            verdict, evidence, ledger, top mappings, "
	"the\n"
	"                         kernel's victim line, what to change\n"
	"  get REPORT [-o FILE] [--extract DIR]\n"
	"                         download the bundle (sha256 and size "
	"checked;\n"
	"                         default FILE: REPORT.tar.gz; '-' = stdout)\n"
	"  open REPORT            extract the bundle and open its report.html\n"
	"  describe pod POD       the pod's reports, newest first\n"
	"\n"
	"options: --kubeconfig FILE, --context NAME, -n/--namespace NS,\n"
	"         -A/--all-namespaces, -o/--output, --pod, --since, --extract\n"
	"exit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 forbidden or\n"
	"            unauthorized, 5 bundle damaged or refused\n";

/* The value of an option given as "--opt VALUE" or "--opt=VALUE". */
static int opt_value(int argc, char **argv, int *i, const char *name,
		     const char *shortname, const char **ret)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n) == 0 && a[n] == '=') {
		*ret = a + n + 1;
		return 1;
	}
	if (!streq(a, name) && !(shortname && streq(a, shortname)))
		return 0;
	if (*i + 1 >= argc) {
		fprintf(stderr, "kubectl-oomlens: %s needs a value\n", name);
		return -EINVAL;
	}
	*ret = argv[++*i];
	return 1;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct {
		const char *name, *shortname;
		size_t off;
	} vals[] = {
		{"--kubeconfig", NULL, offsetof(struct opts, kubeconfig)},
		{"--context", NULL, offsetof(struct opts, context)},
		{"--namespace", "-n", offsetof(struct opts, namespace)},
		{"--output", "-o", offsetof(struct opts, output)},
		{"--pod", NULL, offsetof(struct opts, pod)},
		{"--extract", NULL, offsetof(struct opts, extract)},
	};
	const char *since = NULL;
	bool dashdash = false;

	o->argv = argv;
	o->argc = 0;
	for (int i = 1; i < argc; i++) {
		int r = 0;

		if (dashdash || argv[i][0] != '-' || streq(argv[i], "-")) {
			o->argv[o->argc++] = argv[i];
			continue;
		}
		if (streq(argv[i], "--")) {
			dashdash = true;
			continue;
		}
		if (streq(argv[i], "-A") ||
		    streq(argv[i], "--all-namespaces")) {
			o->all_namespaces = true;
			continue;
		}
		for (size_t k = 0; r == 0 && k < ARRAY_SIZE(vals); k++)
			r = opt_value(argc, argv, &i, vals[k].name,
				      vals[k].shortname,
				      (const char **)((char *)o + vals[k].off));
		if (r == 0)
			r = opt_value(argc, argv, &i, "--since", NULL, &since);
		if (r < 0)
			return r;
		if (r == 0) {
			fprintf(stderr, "kubectl-oomlens: unknown option %s\n",
				argv[i]);
			return -EINVAL;
		}
	}
	o->argv[o->argc] = NULL;
	if (since && cli_parse_duration(since, &o->since_s) < 0) {
		fprintf(stderr,
			"kubectl-oomlens: --since: expected a duration such "
			"as 90s, 15m, 24h or 7d, got '%s'\n",
			since);
		return -EINVAL;
	}
	return 0;
}

/* kubectl's order: the kubeconfig (flag, $KUBECONFIG, ~/.kube/config),
 * and only without one the pod's service account. */
static int make_client(struct ctx *c)
{
	struct kube_kubeconfig_options ko = {
		.paths = c->o.kubeconfig,
		.context = c->o.context,
		.namespace = c->o.namespace,
	};
	struct kube_client_options co = {
		.user_agent = "kubectl-oomlens/" OOMLENS_VERSION};
	struct kube_config *cfg = NULL;
	struct kube_error err = {0};
	int r;

	r = kube_config_load_kubeconfig(&ko, &cfg, &err);
	if (r == -ENOENT && !c->o.kubeconfig && !c->o.context) {
		struct kube_incluster_options io = {0};

		r = kube_config_in_cluster(&io, &cfg);
		if (r == 0 && c->o.namespace) {
			free(cfg->namespace);
			cfg->namespace = strdup(c->o.namespace);
		}
	}
	if (r < 0) {
		fprintf(stderr, "kubectl-oomlens: error: %s\n",
			err.message[0] ? err.message
			: r == -ENOENT ? "no kubeconfig (or no such context) "
					 "and not inside a cluster"
				       : strerror(-r));
		return EXIT_FAIL;
	}
	r = kube_client_new(cfg, &co, &c->client);
	kube_config_free(cfg);
	if (r < 0) {
		fprintf(stderr, "kubectl-oomlens: error: %s\n", strerror(-r));
		return EXIT_FAIL;
	}
	c->ns = c->o.namespace ? c->o.namespace
			       : kube_client_namespace(c->client);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(struct ctx *c);
	} cmds[] = {
		{"list", cmd_list},	    {"show", cmd_show},
		{"get", cmd_get},	    {"open", cmd_open},
		{"describe", cmd_describe},
	};
	struct ctx c = {0};
	int rc;

	for (int i = 1; i < argc; i++) {
		if (streq(argv[i], "--help") || streq(argv[i], "-h") ||
		    (i == 1 && streq(argv[i], "help"))) {
			fputs(usage, stdout);
			return EXIT_OK;
		}
		if (streq(argv[i], "--version") ||
		    (i == 1 && streq(argv[i], "version"))) {
			printf("kubectl-oomlens %s\n", OOMLENS_VERSION);
			return EXIT_OK;
		}
	}
	if (parse_args(argc, argv, &c.o) < 0)
		return EXIT_USAGE;
	if (c.o.argc == 0) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	for (size_t k = 0; k < ARRAY_SIZE(cmds); k++) {
		if (!streq(c.o.argv[0], cmds[k].name))
			continue;
		rc = make_client(&c);
		if (rc == 0)
			rc = cmds[k].fn(&c);
		kube_client_free(c.client);
		return rc;
	}
	fprintf(stderr, "kubectl-oomlens: unknown command '%s'\n%s",
		c.o.argv[0], usage);
	return EXIT_USAGE;
}
