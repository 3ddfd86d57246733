/* SPDX-License-Identifier: Apache-2.0 */
/* Shell completion, as kubectl asks a plugin for it (kubectl ≥ 1.26):
 * `kubectl oomlens sh<TAB>` runs kubectl_complete-oomlens with the words
 * typed after "oomlens", the last one partial (maybe ""), which runs
 * `kubectl-oomlens __complete WORD...`. The answer is cobra's: one
 * candidate a line ("word\tdescription"), then ":<directive>" (4: no file
 * names; 0: the shell's own file completion). Report and namespace names
 * come from the API server within 5 s; without one, none are offered. */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "plugin.h"
#include "base/jget.h"
#include "base/util.h"

#define DIRECTIVE_DEFAULT 0 /* files */
#define DIRECTIVE_NO_FILES 4

/* Whether w, typed as a word of its own ("-n", "--namespace"; not
 * "--opt=value"), is an option whose value is the next word. */
static bool takes_value(const char *w)
{
	for (size_t i = 0; i < plugin_n_options; i++) {
		const struct plugin_option *p = &plugin_options[i];

		if (p->value &&
		    ((w[0] == '-' && w[1] == '-' && streq(w + 2, p->name)) ||
		     (p->val < 256 && w[0] == '-' && w[1] == p->val && !w[2])))
			return true;
	}
	return false;
}

static void offer(const char *word, const char *partial, const char *desc)
{
	if (!word || strncmp(word, partial, strlen(partial)))
		return;
	/* names from the API: nothing that would break the protocol */
	for (const char *p = word; *p; p++)
		if ((unsigned char)*p < 0x20)
			return;
	if (desc)
		printf("%s\t%s\n", word, desc);
	else
		printf("%s\n", word);
}

/* What was typed before the partial word, parsed as the command line
 * is (args.c, leniently): the command, its operands so far, and the
 * connection options (for names from the API). */
struct typed {
	const char *cmd;
	int operands; /* after the command's name */
	struct opts o;
};

static void scan(int argc, char **argv, struct typed *t)
{
	struct plugin_args_error e;
	unsigned taken = 0;

	plugin_parse_args(argc, argv, true, &t->o, &taken, &e);
	if (t->o.argc > 0) {
		t->cmd = t->o.argv[0];
		t->operands = t->o.argc - 1;
	}
}

static const struct kube_resource namespaces = {
	.group = "",
	.version = "v1",
	.plural = "namespaces",
	.kind = "Namespace",
	.namespaced = false,
};

/* The names of res's objects (in the namespace typed, when namespaced),
 * or the string at obj[field][key] of each: spec.pod for describe. */
static void offer_listed(struct typed *t, const struct kube_resource *res,
			 const char *field, const char *key,
			 const char *partial)
{
	struct ctx c = {.o = t->o};
	struct kube_call k = {.res = res};
	struct kube_list_options lo = {.limit = 500};
	struct kube_error err = {0};
	struct json_object *list = NULL, *items;

	/* a TAB waits 5 s at most; a shorter --request-timeout typed holds */
	if (!c.o.timeout_ms || c.o.timeout_ms > 5000)
		c.o.timeout_ms = 5000;
	if (plugin_client(&c) != 0)
		return;
	k.namespace = res->namespaced ? c.ns : NULL;
	if (kube_list(c.client, &k, &lo, &list, &err) == 0) {
		items = jget_array(NULL, list, "items");
		for (size_t i = 0; i < jget_len(items); i++)
			offer(jget_str(NULL, jget(jget_idx(items, i), field),
				       key),
			      partial, NULL);
	}
	json_object_put(list);
	kube_client_free(c.client);
}

/* The kubeconfig's contexts (--kubeconfig typed, else $KUBECONFIG). */
static void offer_contexts(const struct typed *t, const char *partial)
{
	struct kube_kubeconfig_options ko = {.paths = t->o.kubeconfig};
	struct kube_error err = {0};
	struct json_object *names = NULL;

	if (kube_config_list_contexts(&ko, &names, &err) < 0)
		return;
	for (size_t i = 0; i < jget_len(names); i++)
		offer(json_object_get_string(jget_idx(names, i)), partial,
		      NULL);
	json_object_put(names);
}

static int complete_value(struct typed *t, const char *opt, const char *partial)
{
	static const char *const formats[] = {"json", "yaml", "wide", "name"};

	if (streq(opt, "-n") || streq(opt, "--namespace")) {
		offer_listed(t, &namespaces, "metadata", "name", partial);
	} else if (streq(opt, "-o") || streq(opt, "--output")) {
		for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
			offer(formats[i], partial, NULL);
	} else if (streq(opt, "--context")) {
		offer_contexts(t, partial);
	} else if (streq(opt, "--extract") || streq(opt, "--kubeconfig")) {
		return DIRECTIVE_DEFAULT;
	}
	return DIRECTIVE_NO_FILES;
}

/* The options every command takes, and the command's own. */
static void complete_flags(const struct typed *t, const char *partial)
{
	const struct command *cmd = plugin_command(t->cmd);

	for (size_t i = 0; i < plugin_n_options; i++) {
		const struct plugin_option *p = &plugin_options[i];
		char flag[40];

		if (p->hidden ||
		    (p->takes && !(cmd && (cmd->takes & p->takes))))
			continue;
		snprintf(flag, sizeof(flag), "--%s", p->name);
		offer(flag, partial, NULL);
	}
}

static int complete_operand(struct typed *t, const char *partial)
{
	const struct command *cmd = plugin_command(t->cmd);

	if (!cmd || t->operands >= cmd->max_args)
		return DIRECTIVE_NO_FILES;
	if (streq(cmd->name, "describe")) {
		if (t->operands == 0)
			offer("pod", partial, NULL);
		else
			offer_listed(t, &kube_res_oomreports, "spec", "pod",
				     partial);
	} else if (streq(cmd->name, "download") && t->operands == 1) {
		return DIRECTIVE_DEFAULT; /* FILE */
	} else if (!streq(cmd->name, "list")) {
		offer_listed(t, &kube_res_oomreports, "metadata", "name",
			     partial);
	}
	return DIRECTIVE_NO_FILES;
}

int plugin_complete(int argc, char **argv)
{
	struct typed t = {0};
	/* argv[0] is "__complete"; the words follow, the last one partial */
	const char *partial = argc > 1 ? argv[argc - 1] : "";
	const char *prev = argc > 2 ? argv[argc - 2] : NULL;
	const char *eq = partial[0] == '-' ? strchr(partial, '=') : NULL;
	int directive = DIRECTIVE_NO_FILES;
	size_t n;
	const struct command *cmds = plugin_commands(&n);
	char opt[64];

	/* before the scan: getopt_long permutes the words */
	if (eq && (size_t)(eq - partial) < sizeof(opt))
		snprintf(opt, sizeof(opt), "%.*s", (int)(eq - partial),
			 partial);
	else if (prev && takes_value(prev))
		snprintf(opt, sizeof(opt), "%s", prev);
	else
		opt[0] = '\0';
	scan(argc > 1 ? argc - 1 : 1, argv, &t);
	if (opt[0]) {
		/* "--namespace=de" or "-n de": prev's value, not an operand */
		directive = complete_value(&t, opt, eq ? eq + 1 : partial);
	} else if (partial[0] == '-') {
		complete_flags(&t, partial);
	} else if (!t.cmd) {
		for (size_t i = 0; i < n; i++)
			offer(cmds[i].name, partial, cmds[i].summary);
	} else {
		directive = complete_operand(&t, partial);
	}
	printf(":%d\n", directive);
	return EXIT_OK;
}
