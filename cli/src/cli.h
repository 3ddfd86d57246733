/* SPDX-License-Identifier: Apache-2.0 */
/* kubectl-oomlens: what the subcommands share. The exit codes are part of
 * the interface (cli/README.md): scripts tell "no such report" from "not
 * allowed" from "the bundle is damaged or hostile". */
#pragma once

#include <stdbool.h>
#include <stdint.h>

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
	bool all_namespaces;
	const char *output; /* -o: json, yaml, wide, or a file for get */
	const char *pod;
	const char *extract;
	uint64_t since_s; /* 0 = no limit */
	int argc;	  /* operands left after the options */
	char **argv;
};

struct ctx {
	struct opts o;
	struct kube_client *client;
	const char *ns; /* -n, or the kubeconfig context's namespace */
};

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
int cmd_open(struct ctx *c);
