/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-agent pss-check: a Pod (JSON, a file or stdin) checked against
 * a Pod Security level with kube_pss_check(), the function the injector
 * checks its own patches with: for a cluster without Pod Security
 * admission (before 1.23, or a namespace without the label), and for the
 * tests that check pods the API server returned. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "commands.h"
#include "kube/kube_pss.h"

/* A pod manifest is far below this; a PodList is not taken. */
#define PSS_MAX_INPUT (8u << 20)
#define PSS_MAX_DEPTH 64

static const char usage[] =
	"usage: oomlens-agent pss-check --level privileged|baseline|"
	"restricted [FILE|-]\n"
	"prints what in the Pod (JSON) the level refuses, one line each;\n"
	"exit 0: admitted, 1: refused, 2: usage or not a pod\n";

static int read_all(FILE *f, struct strbuf *sb)
{
	char buf[65536];
	size_t n;

	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (strbuf_add(sb, buf, n) < 0)
			return -E2BIG;
	return ferror(f) ? -EIO : 0;
}

static struct json_object *parse(const struct strbuf *sb)
{
	struct json_tokener *tok = json_tokener_new_ex(PSS_MAX_DEPTH);
	struct json_object *o = NULL;

	if (tok && sb->len <= INT32_MAX) {
		o = json_tokener_parse_ex(tok, sb->buf, (int)sb->len);
		if (json_tokener_get_error(tok) != json_tokener_success) {
			json_object_put(o);
			o = NULL;
		}
	}
	json_tokener_free(tok);
	return o;
}

int cmd_pss_check(int argc, char **argv, const struct cli_globals *g)
{
	static const struct option longopts[] = {
		{"level", required_argument, NULL, 'l'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	_cleanup_strbuf_ struct strbuf in = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	enum kube_pss_level level = KUBE_PSS_RESTRICTED;
	struct kube_pss_result res;
	struct json_object *pod;
	const char *path = "-";
	bool have_level = false;
	FILE *f = stdin;
	int c, r;

	(void)g;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		if (c != 'l' || kube_pss_level_parse(optarg, &level) < 0) {
			fputs(usage, stderr);
			return 2;
		}
		have_level = true;
	}
	if (!have_level || argc - optind > 1) {
		fputs(usage, stderr);
		return 2;
	}
	if (optind < argc)
		path = argv[optind];
	if (strcmp(path, "-") != 0 && !(f = fopen(path, "re"))) {
		fprintf(stderr, "pss-check: %s: %s\n", path, strerror(errno));
		return 2;
	}
	strbuf_init(&in, PSS_MAX_INPUT);
	r = read_all(f, &in);
	if (f != stdin)
		fclose(f);
	if (r < 0) {
		fprintf(stderr, "pss-check: %s: %s\n", path,
			r == -E2BIG ? "over 8 MiB" : strerror(-r));
		return 2;
	}
	pod = parse(&in);
	r = kube_pss_check(pod, level, &res);
	json_object_put(pod);
	if (r < 0) {
		fprintf(stderr,
			"pss-check: %s: not a Pod (JSON object with a "
			"spec object)\n",
			path);
		return 2;
	}
	if (r == 0) {
		printf("admitted at %s\n", kube_pss_level_name(level));
		return 0;
	}
	for (size_t i = 0; i < res.n; i++)
		printf("%s %s=%s\n", kube_pss_check_name(res.v[i].check),
		       res.v[i].path, res.v[i].value);
	if (res.more)
		printf("and %zu more\n", res.more);
	return 1;
}
