/* SPDX-License-Identifier: Apache-2.0 */
/* kubectl-oomlens: what the subcommands share. The exit codes are part of
 * the interface (kubectl-oomlens/README.md): scripts tell "no such report"
 * from "not allowed" from "the bundle is damaged or hostile". */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kube/kube.h"

enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,	    /* API unreachable, I/O error, anything else */
	EXIT_USAGE = 2,	    /* bad command line */
	EXIT_NOTFOUND = 3,  /* no such report / bundle */
	EXIT_DENIED = 4,    /* 401/403 from the API server */
	EXIT_BADBUNDLE = 5, /* sha256/size mismatch, or a hostile archive */
};

struct opts {
	const char *kubeconfig, *context, *namespace;
	uint32_t timeout_ms; /* --request-timeout; 0: the client's 30 s */
	const char *as_user; /* --as, --as-group */
	const char *as_groups[8];
	size_t n_as_groups;
	bool all_namespaces;
	const char *selector; /* -l */
	const char *output;   /* -o: json, yaml, wide, name */
	const char *pod;
	const char *extract;
	uint64_t since_s; /* 0 = no limit */
	bool help, version;
	int argc; /* operands left after the options: the command first */
	char **argv;
};

struct ctx;

/* args.c: what a refused command line was refused for, one line. */
struct plugin_args_error {
	char why[256];
};

/* Parses argv (argv[0] the program's name) as kubectl does, with
 * getopt_long over plugin_options: options anywhere, "--" ending them,
 * `-n ns`, `-nns`, `--namespace ns`, `--namespace=ns` alike. Options go to
 * *o, the command and its operands to o->argv in order, the T_ bits of
 * the command-only options given to *taken. Returns 0, or -EINVAL with
 * e->why set. lenient (completion: words half typed): unknown options,
 * missing or bad values skipped, never an error. Permutes argv. */
int plugin_parse_args(int argc, char **argv, bool lenient, struct opts *o,
		      unsigned *taken, struct plugin_args_error *e);

/* The options only some commands take (struct command.takes; main.c
 * parses them, commands.c says who takes which). */
enum {
	T_ALL = 1u << 0,      /* -A */
	T_SELECTOR = 1u << 1, /* -l */
	T_POD = 1u << 2,      /* --pod */
	T_SINCE = 1u << 3,    /* --since */
	T_OUTPUT = 1u << 4,   /* -o */
	T_EXTRACT = 1u << 5,  /* --extract */
};

/* getopt_long's values of the options without a short letter. */
enum {
	O_KUBECONFIG = 256,
	O_CONTEXT,
	O_TIMEOUT,
	O_AS,
	O_AS_GROUP,
	O_POD,
	O_SINCE,
	O_EXTRACT,
	O_VERSION,
};

/* Every option once: its long name, its value in getopt_long (the short
 * letter when it has one, else an O_ value), whether it takes a value,
 * and the T_ bit of the commands that take it (0: every command).
 * main.c parses with it, says with it what a command does not take, and
 * complete.c offers from it. */
struct plugin_option {
	const char *name;
	int val;
	bool value;
	unsigned takes;
	bool hidden; /* not offered by completion (--version) */
};

extern const struct plugin_option plugin_options[];
extern const size_t plugin_n_options;

/* A command: what it takes (T_ bits), how many operands after
 * its name, and what runs it. */
struct command {
	const char *name, *alias;
	const char *usage, *summary;
	unsigned takes;
	int min_args, max_args;
	int (*fn)(struct ctx *c);
};

struct ctx {
	struct opts o;
	const struct command *cmd;
	struct kube_client *client;
	const char *ns; /* -n, or the kubeconfig context's namespace */
};

/* commands.c: the table and the help printed from it. */
const struct command *plugin_commands(size_t *n);
/* -o's formats: json, yaml, wide, name. */
bool plugin_output_format(const char *out);
/* The command named (or aliased) name; NULL when none. */
const struct command *plugin_command(const char *name);
void plugin_command_usage(const struct command *cmd, FILE *f);
/* Every command's usage and summary, the global options, exit codes. */
void plugin_usage(FILE *f);
/* util.c: the API client from the options (kubectl's order of credentials);
 * 0 or an exit code, said on stderr. */
int plugin_client(struct ctx *c);
/* `kubectl-oomlens __complete WORD...` (kubectl_complete-oomlens): the
 * candidates for the last word, one a line, then cobra's ":directive". */
int plugin_complete(int argc, char **argv);

/* "get prints reports; to save a bundle: download …" on stderr. */
void plugin_hint_download(void);
/* After a NotFound of a whole resource type: are the CRDs installed? */
void plugin_hint_crds(const struct kube_error *err);

/* Maps a -errno of a kube call to an exit code and prints kubectl's kind
 * of message to stderr ("Error from server (NotFound): ..."). */
int cli_fail(const char *what, int r, const struct kube_error *err);

/* "2026-11-30T10:00:00Z" (fraction and offset allowed) to unix seconds.
 * Pure. Returns 0 or -EINVAL. */
int cli_parse_time(const char *s, int64_t *ret);
/* "90s", "15m", "24h", "7d" (or combined, "1h30m"). Pure. */
int cli_parse_duration(const char *s, uint64_t *ret_s);
/* kubectl's age: "45s", "12m", "5h", "3d". */
void cli_format_age(int64_t seconds, char *buf, size_t n);
/* Prints v as YAML (block style, strings JSON-quoted) to stdout. */
void cli_print_yaml(struct json_object *v);

int cmd_list(struct ctx *c);
int cmd_describe(struct ctx *c);
int cmd_show(struct ctx *c);
int cmd_get(struct ctx *c);
int cmd_download(struct ctx *c);
int cmd_open(struct ctx *c);
