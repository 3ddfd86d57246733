/* SPDX-License-Identifier: Apache-2.0 */
/* bench_store: what N kills' OOMReports and OOMBundles cost a real API
 * server. Creates them with the publisher's own calls (kube_oomreport_write,
 * then kube_oombundle_write owned by the report, as publish/cluster_publish.c
 * does), bundles of SIZE bytes of random data (the worst case: a bundle
 * of text compresses below its budget).
 *   bench_store KUBECONFIG NAMESPACE N SIZE [FIRST]
 * Prints one line: objects created, seconds, objects/s. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/parse.h"
#include "base/util.h"
#include "kube/kube.h"

static void fill(unsigned char *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)x;
	}
}

static int one(struct kube_client *c, const char *ns, unsigned i,
	       unsigned char *data, size_t size)
{
	char name[64], hex[65];
	struct kube_error err = {0};
	struct kube_oomreport r = {.namespace = (char *)ns,
				   .pod = "bench",
				   .container = "app",
				   .node = "bench-node",
				   .comm = "bench",
				   .verdict = "limit-too-low",
				   .summary = "bench_store"};
	struct kube_oomreport *out = NULL;
	struct kube_write_options wo = {.mode = KUBE_WRITE_CREATE};
	struct kube_owner_ref owner = {.api_version = "oomlens.io/v1alpha1",
				       .kind = "OOMReport",
				       .controller = true};
	struct kube_oombundle b = {.namespace = (char *)ns,
				   .data = data,
				   .size = size,
				   .sha256 = hex};
	int q;

	snprintf(name, sizeof(name), "oom-bench-%06u", i);
	fill(data, size, i);
	kube_sha256_hex(data, size, hex);
	r.name = r.bundle = b.name = name;
	r.bundle_sha256 = hex;
	r.bundle_size = (int64_t)size;
	q = kube_oomreport_write(c, &r, &wo, &out, &err);
	if (q < 0) {
		fprintf(stderr, "report %s: %s\n", name, err.message);
		return q;
	}
	owner.name = name;
	owner.uid = out->uid;
	wo.owner = &owner;
	q = kube_oombundle_write(c, &b, &wo, &err);
	kube_oomreport_free(out);
	if (q < 0)
		fprintf(stderr, "bundle %s: %s\n", name, err.message);
	return q;
}

int main(int argc, char **argv)
{
	struct kube_kubeconfig_options ko = {0};
	struct kube_client_options co = {.qps = -1, .timeout_ms = 120000};
	struct kube_config *cfg;
	struct kube_client *c;
	struct kube_error err = {0};
	unsigned n, first = 0;
	uint64_t size;
	unsigned char *data;
	struct timespec t0, t1;
	double s;

	if (argc < 5 || parse_uint(argv[3], &n) < 0 ||
	    parse_size(argv[4], &size) < 0 || size > (900u << 10) ||
	    (argc > 5 && parse_uint(argv[5], &first) < 0)) {
		fprintf(stderr, "usage: bench_store KUBECONFIG NAMESPACE N "
				"SIZE [FIRST]\n");
		return 2;
	}
	ko.paths = argv[1];
	if (kube_config_load_kubeconfig(&ko, &cfg, &err) < 0 ||
	    kube_client_new(cfg, &co, &c) < 0) {
		fprintf(stderr, "kubeconfig %s: %s\n", argv[1], err.message);
		return 1;
	}
	data = malloc(size ? size : 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = first; i < first + n; i++)
		if (one(c, argv[2], i, data, (size_t)size) < 0)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("created %u reports + bundles of %" PRIu64 " bytes in %.1f s "
	       "(%.0f/s)\n",
	       n, size, s, n / s);
	free(data);
	kube_client_free(c);
	kube_config_free(cfg);
	return 0;
}
