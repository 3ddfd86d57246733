/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar malloc-stats PID: glibc's own figures (mallinfo2, and
 * with --xml malloc_info per arena) read from outside through ptcall; and
 * the glibc branch of `trim PID` (malloc_trim(0)) for non-JVM processes. */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>

#include "commands.h"
#include "base/host.h"
#include "base/parse.h"
#include "kernel/procfs.h"
#include "inspect/ptcall.h"
#include "base/util.h"

struct ms_args {
	bool json, xml;
	unsigned timeout_ms;
	const char *root;
	int pid;
};

static void ms_usage(FILE *f)
{
	fprintf(f, "usage: oomlens-sidecar malloc-stats [--json] [--xml] "
		   "[--timeout MS] [--host-root DIR] PID\n"
		   "Reads glibc's allocator figures of PID from outside "
		   "(ptrace: one thread is\nstopped for well under a "
		   "millisecond): system, in use, free (retained),\nreleasable "
		   "and mmap bytes; --xml adds malloc_info per arena.\n");
}

static int ms_parse(int argc, char **argv, struct ms_args *a)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"xml", no_argument, NULL, 'x'},
		{"timeout", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j')
			a->json = true;
		else if (c == 'x')
			a->xml = true;
		else if (c == 't' && parse_uint(optarg, &a->timeout_ms) == 0 &&
			 a->timeout_ms > 0)
			continue;
		else
			return c == 'h' ? 0 : 2;
	}
	if (argc - optind != 1 || parse_int(argv[optind], &a->pid) < 0 ||
	    a->pid <= 0)
		return 2;
	return -1; /* go on */
}

static void print_bytes(const char *what, uint64_t v)
{
	printf("%-18s %14" PRIu64 " bytes (%.1f MiB)\n", what, v,
	       (double)v / 1048576.0);
}

static void print_text(int pid, const struct ptcall_mallinfo2 *mi,
		       const struct ptcall_malloc_info *info,
		       const struct ptcall_report *rep)
{
	printf("%d: glibc malloc (thread %d stopped %.3f ms, total %.3f ms)\n",
	       pid, rep->tid, (double)rep->stopped_us / 1000.0,
	       (double)rep->total_us / 1000.0);
	print_bytes("system (arenas):", mi->arena);
	print_bytes("in use:", mi->uordblks + mi->hblkhd);
	print_bytes("free (retained):", mi->fordblks);
	print_bytes("top releasable:", mi->keepcost);
	print_bytes("mmap:", mi->hblkhd);
	printf("%-18s %14" PRIu64 " regions\n", "mmap regions:", mi->hblks);
	printf("%-18s %14" PRIu64 " (%" PRIu64 " fastbin)\n",
	       "free chunks:", mi->ordblks, mi->smblks);
	if (!info)
		return;
	printf("arenas: %zu\n", info->n_arenas);
	printf("  %4s %14s %14s %14s\n", "nr", "system", "free", "in use");
	for (size_t i = 0; i < info->n_arenas; i++) {
		const struct ptcall_arena *a = &info->arenas[i];
		uint64_t fr = a->fast_bytes + a->rest_bytes;

		printf("  %4d %14" PRIu64 " %14" PRIu64 " %14" PRIu64 "\n",
		       a->nr, a->system_current, fr,
		       a->system_current > fr ? a->system_current - fr : 0);
	}
}

static int ms_output(const struct ms_args *a, const struct ptcall_mallinfo2 *mi,
		     const char *xml, size_t len,
		     const struct ptcall_report *rep)
{
	struct ptcall_malloc_info info = {0};
	struct json_object *o = NULL;
	int r = 0;

	if (xml) {
		r = ptcall_parse_malloc_info(xml, len, &info);
		if (r < 0) {
			fprintf(stderr,
				"oomlens-sidecar: malloc_info of %d: "
				"unparsable XML\n",
				a->pid);
			return 1;
		}
	}
	if (a->json) {
		r = ptcall_allocator_json_from(mi, xml ? &info : NULL, rep, &o);
		if (r >= 0)
			printf("%s\n", json_object_to_json_string_ext(
					       o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else {
		print_text(a->pid, mi, xml ? &info : NULL, rep);
		if (xml)
			fputs(xml, stdout);
	}
	ptcall_malloc_info_release(&info);
	return r < 0 ? 1 : 0;
}

int cmd_malloc_stats(int argc, char **argv, const struct cli_globals *g)
{
	struct ms_args a = {.root = g->host_root};
	struct ptcall_report rep;
	struct ptcall_mallinfo2 mi;
	_cleanup_free_ char *xml = NULL;
	struct ptcall_opts o;
	struct host h;
	size_t len = 0;
	int r = ms_parse(argc, argv, &a);

	if (r >= 0) {
		ms_usage(r == 0 ? stdout : stderr);
		return r;
	}
	r = host_open(a.root, &h);
	if (r < 0) {
		fprintf(stderr, "oomlens-sidecar: host root '%s': %s\n", a.root,
			strerror(-r));
		return 1;
	}
	o = (struct ptcall_opts){h.proc_fd, a.timeout_ms};
	r = ptcall_malloc_stats(a.pid, &o, &mi, a.xml ? &xml : NULL, &len,
				&rep);
	host_close(&h);
	if (r < 0) {
		fprintf(stderr, "oomlens-sidecar: malloc-stats %d: %s (%s)\n",
			a.pid, rep.reason[0] ? rep.reason : strerror(-r),
			strerror(-r));
		return 1;
	}
	return ms_output(&a, &mi, xml, len, &rep);
}

static uint64_t rss_bytes(const struct host *h, int pid)
{
	struct proc_status st;
	int fd = host_open_pid(h, pid);
	int r = fd < 0 ? fd : procfs_read_status(fd, &st);

	if (fd >= 0)
		close(fd);
	return r < 0 ? 0 : st.vm_rss_kb << 10;
}

static void print_glibc_trim(int pid, uint64_t before, uint64_t after,
			     int released, const struct ptcall_report *rep,
			     bool json)
{
	int64_t diff = (int64_t)after - (int64_t)before;

	if (json) {
		printf("{\"pid\":%d,\"method\":\"malloc_trim\",\"released\":%d,"
		       "\"rss_before_bytes\":%" PRIu64
		       ",\"rss_after_bytes\":%" PRIu64
		       ",\"difference_bytes\":%" PRId64
		       ",\"duration_us\":%" PRIu64 ",\"stopped_us\":%" PRIu64
		       ",\"tid\":%d}\n",
		       pid, released, before, after, diff, rep->total_us,
		       rep->stopped_us, rep->tid);
		return;
	}
	printf("%d: malloc_trim(0) via ptrace (glibc), returned %d\n", pid,
	       released);
	printf("rss before: %" PRIu64 " KiB\n", before >> 10);
	printf("rss after:  %" PRIu64 " KiB\n", after >> 10);
	printf("difference: %+" PRId64 " KiB (%+.1f%%)\n", diff / 1024,
	       before ? 100.0 * (double)diff / (double)before : 0.0);
	printf("time taken: %.3f ms (thread %d stopped %.3f ms)\n",
	       (double)rep->total_us / 1000.0, rep->tid,
	       (double)rep->stopped_us / 1000.0);
}

int sidecar_trim_glibc(const struct host *h, int pid, unsigned timeout_ms,
		       bool json)
{
	struct ptcall_opts o = {h->proc_fd, timeout_ms};
	struct ptcall_report rep;
	uint64_t before, after;
	int released = 0, r;

	before = rss_bytes(h, pid);
	r = ptcall_malloc_trim(pid, &o, &released, &rep);
	if (r < 0) {
		fprintf(stderr, "oomlens-sidecar: trim %d: %s (%s)\n", pid,
			rep.reason[0] ? rep.reason : strerror(-r),
			strerror(-r));
		return 1;
	}
	after = rss_bytes(h, pid);
	print_glibc_trim(pid, before, after, released, &rep, json);
	return 0;
}
