/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar snapshot PID… -o DIR: one heavy snapshot per process,
 * written to DIR/processes/<pid>/. */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "base/fileio.h"
#include "base/host.h"
#include "base/log.h"
#include "base/parse.h"
#include "forensics/snapshot.h"
#include "base/util.h"

static void snapshot_usage(FILE *f)
{
	fprintf(f,
		"usage: oomlens-sidecar snapshot PID... -o DIR "
		"[--host-root DIR] [--no-redact] [--pmap-json]\n"
		"         [--allocator-probe off|ptrace]\n"
		"Writes status, cmdline.txt, cgroup, smaps_rollup, pmap.txt, "
		"classes.json and\narenas.json of each PID to "
		"DIR/processes/<pid>/.\n"
		"--allocator-probe ptrace adds allocator.json (glibc's "
		"mallinfo2 and malloc_info,\nread by stopping one thread "
		"briefly; default off).\n");
}

static int snapshot_pids(const struct host *h, char **pids, int n,
			 const char *dir, const struct snapshot_opts *o)
{
	_cleanup_close_ int dfd = -1;
	int failed = 0, r, pid;

	r = mkdir_p_at(AT_FDCWD, dir, MODE_PRIVATE_DIR);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r < 0 || dfd < 0 ||
	    mkdir_p_at(dfd, "processes", MODE_PRIVATE_DIR) < 0) {
		log_error("cannot create output directory \"%s\"", dir);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		_cleanup_close_ int pfd = -1;
		struct snapshot_result res;

		if (parse_int(pids[i], &pid) < 0 || pid <= 0) {
			log_error("not a pid: \"%s\"", pids[i]);
			failed++;
			continue;
		}
		pfd = openat(dfd, "processes",
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r = pfd < 0 ? -errno : snapshot_process(h, pid, pfd, o, &res);
		if (r < 0) {
			log_error("snapshot of pid %d failed: %s", pid,
				  strerror(-r));
			failed++;
			continue;
		}
		log_info("snapshot written: pid=%d rss_kb=%llu "
			 "mappings=%zu arena_heaps=%zu truncated=%d",
			 pid, (unsigned long long)res.rss_kb, res.n_mappings,
			 res.n_arena_heaps, res.truncated);
	}
	return failed ? 1 : 0;
}

int cmd_snapshot(int argc, char **argv, const struct cli_globals *g)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"no-redact", no_argument, NULL, 'n'},
		{"pmap-json", no_argument, NULL, 'j'},
		{"allocator-probe", required_argument, NULL, 'A'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct snapshot_opts o = {0};
	const char *root = g->host_root, *dir = NULL;
	struct host h;
	int c, r;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			dir = optarg;
			break;
		case 'n':
			o.no_redact = true;
			break;
		case 'j':
			o.pmap_json = true;
			break;
		case 'A': /* off|ptrace */
			if (!streq(optarg, "off") && !streq(optarg, "ptrace")) {
				snapshot_usage(stderr);
				return 2;
			}
			o.allocator_probe = streq(optarg, "ptrace");
			break;
		case 'h':
			snapshot_usage(stdout);
			return 0;
		default:
			snapshot_usage(stderr);
			return 2;
		}
	}
	if (!dir || optind >= argc) {
		snapshot_usage(stderr);
		return 2;
	}
	r = host_open(root, &h);
	if (r < 0) {
		log_error("cannot open host root \"%s\"", root);
		return 1;
	}
	r = snapshot_pids(&h, argv + optind, argc - optind, dir, &o);
	host_close(&h);
	return r;
}
