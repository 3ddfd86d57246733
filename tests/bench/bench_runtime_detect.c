/* SPDX-License-Identifier: Apache-2.0 */
/* bench_runtime_detect: what the sidecar's first look at a process costs —
 * every runtime's detect hook and, for the one that answers yes, its first
 * sight (the facts the timeline's event comes from), as
 * sidecar/src/run_runtime.c runs them, on live processes.
 *   bench_runtime_detect ROUNDS LABEL=PID...
 * For each process: the median and 95th percentile wall time of one look
 * (µs), which runtime answered and the event it would note; at the end,
 * the bench's peak RSS before the first look and after all of them, and
 * the heap in use after (nothing of a look may stay behind). */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/fileio.h"
#include "base/host.h"
#include "base/parse.h"
#include "forensics/runtimes/registry.h"

static long status_kib(const char *field)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *p;
	uint64_t v = 0;

	if (read_file_at(AT_FDCWD, "/proc/self/status", 1 << 16, &sb) < 0)
		return -1;
	p = strstr(sb.buf, field);
	if (!p)
		return -1;
	p += strlen(field);
	while (*p == ' ' || *p == '\t')
		p++;
	if (scan_u64(&p, &v) < 0)
		return -1;
	return (long)v;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One look, as run_runtime.c's sight() takes it: the runtime that
 * answered (NULL for none) and its event in *s. */
static const struct diag_runtime *look(const struct host *h, int pid,
				       struct rt_sight *s, int *err)
{
	struct rt_sight_cache cache = RT_SIGHT_CACHE_INIT;
	const struct diag_runtime *found = NULL;
	int fd = host_open_pid(h, pid);

	*err = 0;
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	*s = (struct rt_sight){.h = h,
			       .pid = pid,
			       .proc_fd = fd,
			       .cache = &cache,
			       .limit = 200u << 20};
	for (size_t i = 0; i < diag_runtime_count(); i++) {
		const struct diag_runtime *rt = diag_runtime_at(i);

		if (!rt->detect || rt->detect(s) <= 0)
			continue;
		found = rt;
		if (rt->first_sight && rt->first_sight(s) < 0)
			*err = -EIO;
	}
	rt_sight_cache_release(&cache);
	close(fd);
	return found;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct host h;
	unsigned rounds;
	uint64_t *ns;
	long hwm0;
	int rc = 0;

	if (argc < 3 || parse_uint(argv[1], &rounds) < 0 || rounds == 0) {
		fprintf(stderr, "usage: %s ROUNDS LABEL=PID...\n", argv[0]);
		return 2;
	}
	if (host_open("/", &h) < 0) {
		fprintf(stderr, "bench_runtime_detect: cannot open /\n");
		return 1;
	}
	ns = calloc(rounds, sizeof(*ns));
	if (!ns)
		return 1;
	hwm0 = status_kib("VmHWM:");
	for (int a = 2; a < argc; a++) {
		const char *eq = strchr(argv[a], '=');
		const struct diag_runtime *rt = NULL;
		struct rt_sight s;
		unsigned pid;
		int err = 0;

		if (!eq || parse_uint(eq + 1, &pid) < 0) {
			fprintf(stderr,
				"bench_runtime_detect: %s: not LABEL=PID\n",
				argv[a]);
			return 2;
		}
		for (unsigned r = 0; r < rounds; r++) {
			uint64_t t0 = now_ns();

			rt = look(&h, (int)pid, &s, &err);
			ns[r] = now_ns() - t0;
			if (err == -ESRCH)
				break;
		}
		if (err) {
			printf("runtime detect: %.*s (pid %u): %s\n",
			       (int)(eq - argv[a]), argv[a], pid,
			       strerror(-err));
			rc = 1;
			continue;
		}
		qsort(ns, rounds, sizeof(*ns), cmp_u64);
		printf("runtime detect: %-22.*s %-7s %7.1f µs median, %7.1f µs "
		       "p95 (%u looks)%s%s\n",
		       (int)(eq - argv[a]), argv[a], rt ? rt->name : "none",
		       (double)ns[rounds / 2] / 1e3,
		       (double)ns[rounds * 95 / 100] / 1e3, rounds,
		       s.event_kind[0] ? "; event " : "", s.event_kind);
	}
	free(ns);
	malloc_trim(0);
	printf("runtime detect: bench peak RSS %.1f MiB before the first look, "
	       "%.1f MiB after all; heap in use after %zu bytes\n",
	       (double)hwm0 / 1024, (double)status_kib("VmHWM:") / 1024,
	       mallinfo2().uordblks);
	host_close(&h);
	return rc;
}
