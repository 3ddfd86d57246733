/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-agent webhook: the sidecar injector (docs/injector.md). Options
 * here; the TLS server is webhook.c, the mutation inject.c. */
#include <errno.h>
#include <getopt.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/parse.h"
#include "commands.h"
#include "injector/inject.h"
#include "kube/kube.h"
#include "injector/webhook.h"

enum {
	OPT_CERT = 0x100,
	OPT_KEY,
	OPT_ADDR,
	OPT_IMAGE,
	OPT_PULL,
	OPT_CPU_REQ,
	OPT_MEM_REQ,
	OPT_MEM_LIM,
	OPT_SPOOL,
	OPT_NATIVE,
	OPT_RELOAD,
	OPT_LEVEL,
};

static const struct option longopts[] = {
	{"tls-cert", required_argument, NULL, OPT_CERT},
	{"tls-key", required_argument, NULL, OPT_KEY},
	{"addr", required_argument, NULL, OPT_ADDR},
	{"sidecar-image", required_argument, NULL, OPT_IMAGE},
	{"pull-policy", required_argument, NULL, OPT_PULL},
	{"cpu-request", required_argument, NULL, OPT_CPU_REQ},
	{"memory-request", required_argument, NULL, OPT_MEM_REQ},
	{"memory-limit", required_argument, NULL, OPT_MEM_LIM},
	{"spool-size", required_argument, NULL, OPT_SPOOL},
	{"native-sidecars", required_argument, NULL, OPT_NATIVE},
	{"cert-check-interval", required_argument, NULL, OPT_RELOAD},
	{"pod-security", required_argument, NULL, OPT_LEVEL},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static const char usage[] =
	"usage: oomlens-agent webhook --tls-cert FILE --tls-key FILE\n"
	"         --sidecar-image IMAGE [--addr [HOST]:PORT (:8443)]\n"
	"         [--pull-policy P] [--cpu-request Q (20m)]\n"
	"         [--memory-request Q (32Mi)] [--memory-limit Q (128Mi)]\n"
	"         [--spool-size Q (256Mi)] [--native-sidecars "
	"auto|true|false]\n"
	"         [--cert-check-interval SECONDS (10)]\n"
	"         [--pod-security privileged|baseline|restricted]\n"
	"serves /mutate-pods[/LEVEL] (admission.k8s.io/v1) and /healthz over "
	"TLS;\n"
	"a pod sent to /mutate-pods is shaped for --pod-security's level\n"
	"(privileged), to /mutate-pods/LEVEL for LEVEL\n";

/* "" quantities mean unset (the chart passes empty values through). */
static const char *opt_or_null(const char *s)
{
	return s && *s ? s : NULL;
}

/* auto: the API server's /version (in-cluster service account); no
 * cluster or no answer: a regular container, which works everywhere. */
static bool native_auto(void)
{
	struct kube_config *kc = NULL;
	struct kube_client *c = NULL;
	struct kube_request rq = {.method = "GET", .path = "/version"};
	struct kube_client_options co = {.no_retries = true,
					 .timeout_ms = 5000};
	_cleanup_strbuf_ struct strbuf body = STRBUF_INIT;
	struct kube_error err = {0};
	long status = 0;
	bool native = false;
	int r = kube_config_in_cluster(NULL, &kc);

	if (r == 0)
		r = kube_client_new(kc, &co, &c);
	if (r == 0)
		r = kube_request(c, &rq, &status, &body, &err);
	if (r == 0 && status == 200)
		r = inject_parse_version(body.buf, body.len, &native);
	else if (r == 0)
		r = -EPROTO;
	if (r < 0)
		log_warn("native sidecars: the API server's version is unknown "
			 "(%s): injecting a regular container",
			 strerror(-r));
	kube_client_free(c);
	kube_config_free(kc);
	return r == 0 && native;
}

static int parse_native(const char *v, int *ret)
{
	if (streq(v, "auto"))
		*ret = -1;
	else if (streq(v, "true"))
		*ret = 1;
	else if (streq(v, "false"))
		*ret = 0;
	else
		return -EINVAL;
	return 0;
}

/* The injector's webhook: no capability at all; after start-up (socket
 * bound, certificate loaded) it accepts TLS connections, reads and writes
 * them, and re-reads its certificate files: the base list has all it
 * needs. No socket made, no connect, no fork, no exec. */
static const struct privs_spec webhook_privs = {
	.caps = 0,
	.seccomp = true,
};

static int parse_opts(int argc, char **argv, struct webhook_options *w,
		      int *native, bool tls)
{
	int c;
	uint64_t secs;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CERT:
			w->cert = optarg;
			break;
		case OPT_KEY:
			w->key = optarg;
			break;
		case OPT_ADDR:
			w->addr = optarg;
			break;
		case OPT_IMAGE:
			w->inject.image = opt_or_null(optarg);
			break;
		case OPT_PULL:
			w->inject.pull_policy = opt_or_null(optarg);
			break;
		case OPT_CPU_REQ:
			w->inject.cpu_request = opt_or_null(optarg);
			break;
		case OPT_MEM_REQ:
			w->inject.memory_request = opt_or_null(optarg);
			break;
		case OPT_MEM_LIM:
			w->inject.memory_limit = opt_or_null(optarg);
			break;
		case OPT_SPOOL:
			w->inject.spool_size = opt_or_null(optarg);
			break;
		case OPT_NATIVE:
			if (parse_native(optarg, native) < 0) {
				fprintf(stderr,
					"webhook: --native-sidecars: "
					"expected auto, true or false\n");
				return 2;
			}
			break;
		case OPT_LEVEL:
			if (kube_pss_level_parse(optarg, &w->inject.level) <
			    0) {
				fprintf(stderr,
					"webhook: --pod-security: expected "
					"privileged, baseline or restricted\n");
				return 2;
			}
			break;
		case OPT_RELOAD:
			if (parse_u64(optarg, &secs) < 0 || secs == 0 ||
			    secs > 3600) {
				fprintf(stderr,
					"webhook: --cert-check-interval: "
					"1..3600 seconds\n");
				return 2;
			}
			w->check_s = (unsigned)secs;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc || (tls && (!w->cert || !w->key)) ||
	    !w->inject.image) {
		fprintf(stderr,
			"webhook: --tls-cert, --tls-key and "
			"--sidecar-image are required\n%s",
			usage);
		return 2;
	}
	return -1;
}

int cmd_webhook(int argc, char **argv, const struct cli_globals *g)
{
	struct webhook_options w = {
		.addr = ":8443", .check_s = 10, .privs = &webhook_privs};
	int native = -1, r;

	inject_config_init(&w.inject);
	r = parse_opts(argc, argv, &w, &native, true);
	if (r >= 0)
		return r;
	w.inject.native_sidecar = native < 0 ? native_auto() : native == 1;
	return webhook_serve(&w, g) < 0 ? 1 : 0;
}

/* The same answer the webhook gives, for one review on stdin: for
 * checking a pod before installing, and for the tests that apply the
 * patch with another JSON Patch implementation. --native-sidecars auto
 * means false here (no cluster is asked). */
int cmd_inject_review(int argc, char **argv, const struct cli_globals *g)
{
	struct webhook_options w = {0};
	_cleanup_strbuf_ struct strbuf in = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	char buf[65536];
	size_t n;
	int native = -1, r;

	(void)g;
	inject_config_init(&w.inject);
	r = parse_opts(argc, argv, &w, &native, false);
	if (r >= 0)
		return r;
	w.inject.native_sidecar = native == 1;
	strbuf_init(&in, WEBHOOK_MAX_BODY);
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		if (strbuf_add(&in, buf, n) < 0) {
			fprintf(stderr, "inject-review: over %u bytes\n",
				WEBHOOK_MAX_BODY);
			return 1;
		}
	r = inject_review(in.buf, in.len, &w.inject, &out);
	if (r < 0) {
		fprintf(stderr, "inject-review: %s\n", strerror(-r));
		return 1;
	}
	fwrite(out.buf, 1, out.len, stdout);
	fputc('\n', stdout);
	return 0;
}
