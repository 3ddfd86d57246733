/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar trim PID: asks a JVM to give freed C-heap memory back to
 * the kernel (System.trim_native_heap, i.e. malloc_trim) and shows what it
 * returned, measured on VmRSS. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "commands.h"
#include "base/host.h"
#include "inspect/jvm.h"
#include "base/parse.h"
#include "base/util.h"

static void trim_usage(FILE *f)
{
	fprintf(f, "usage: oomlens-sidecar trim [--json] [--timeout MS] "
		   "[--host-root DIR] PID\n"
		   "Trims the native heap of the JVM PID and prints RSS "
		   "before, after, the difference and the time taken.\n");
}

static void print_trim(int pid, const struct jvm_trim_result *t, bool json)
{
	int64_t diff = (int64_t)t->rss_after - (int64_t)t->rss_before;

	if (json) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

		strbuf_init(&sb, 64u << 10);
		if (jvm_trim_to_json(t, &sb) == 0)
			printf("%s\n", sb.buf);
		return;
	}
	printf("%d: %s\n", pid, t->command);
	printf("rss before: %" PRIu64 " KiB\n", t->rss_before >> 10);
	printf("rss after:  %" PRIu64 " KiB\n", t->rss_after >> 10);
	printf("difference: %+" PRId64 " KiB (%+.1f%%)\n", diff / 1024,
	       t->rss_before ? 100.0 * (double)diff / (double)t->rss_before
			     : 0.0);
	printf("time taken: %.3f ms\n", (double)t->duration_us / 1000.0);
	if (t->output[0])
		printf("jvm says:   %s\n", t->output);
}

int cmd_trim(int argc, char **argv, const struct cli_globals *g)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"timeout", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct jvm_attach_opts o = {0};
	struct jvm_trim_result t;
	const char *root = g->host_root;
	bool json = false;
	struct host h;
	int c, pid, r;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j') {
			json = true;
			continue;
		}
		if (c == 't' && parse_uint(optarg, &o.timeout_ms) == 0 &&
		    o.timeout_ms > 0)
			continue;
		trim_usage(c == 'h' ? stdout : stderr);
		return c == 'h' ? 0 : 2;
	}
	if (argc - optind != 1 || parse_int(argv[optind], &pid) < 0 ||
	    pid <= 0) {
		trim_usage(stderr);
		return 2;
	}
	r = host_open(root, &h);
	if (r < 0) {
		fprintf(stderr, "oomlens-sidecar: host root '%s': %s\n", root,
			strerror(-r));
		return 1;
	}
	r = jvm_trim(&h, pid, &o, &t);
	if (r == -JVM_E_NOT_JVM) {
		/* not a JVM: glibc's malloc_trim(0) from outside (ptcall) */
		r = sidecar_trim_glibc(&h, pid, o.timeout_ms, json);
		host_close(&h);
		return r;
	}
	host_close(&h);
	if (r < 0) {
		fprintf(stderr, "oomlens-sidecar: trim %d: %s\n", pid,
			r == -JVM_E_NOT_JVM ? "not a JVM (no libjvm.so mapped, "
					      "no hsperfdata); trimming "
					      "other processes is not "
					      "supported yet"
					    : jvm_strerror(r));
		return 1;
	}
	print_trim(pid, &t, json);
	return 0;
}
