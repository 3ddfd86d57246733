/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the cgroup parsers: memory.events, memory.oom_control,
 * memory.stat, cgroup.procs and single values (v1 and v2), all on the
 * same bytes (not NUL-terminated), plus cgroup_path_within on a
 * NUL-terminated copy. Checks the invariants callers rely on, not only
 * "no crash". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_value(const char *buf, size_t len, enum cgroup_mode mode)
{
	struct cgroup_value v;

	cgroup_parse_value(buf, len, mode, &v);
	if (v.state != CGV_OK && v.v != 0)
		abort(); /* only an OK value carries a number */
	if (v.state != CGV_OK && v.state != CGV_UNLIMITED && v.state != CGV_BAD)
		abort(); /* a parser never says "absent" */
	if (mode == CGROUP_V1 && v.state == CGV_OK && v.v >= (1ull << 62))
		abort();
}

static void check_stat(const char *buf, size_t len)
{
	struct cgroup_stat s = {0};
	uint64_t v;

	if (cgroup_parse_stat(buf, len, &s) < 0) {
		if (s.e || s.n)
			abort(); /* ret untouched on failure */
		return;
	}
	if (s.n == 0 || !s.e)
		abort();
	for (size_t i = 0; i < s.n; i++) {
		if (strlen(s.e[i].name) >= sizeof(s.e[i].name))
			abort();
		if (!cgroup_stat_get(&s, s.e[i].name, &v))
			abort();
	}
	cgroup_stat_release(&s);
}

static void check_procs(const char *buf, size_t len)
{
	int pids[8] = {7};
	size_t n = 1, added = cgroup_parse_procs(buf, len, pids, &n, 8);

	if (n != added + 1 || n > 8 || pids[0] != 7)
		abort();
	for (size_t i = 1; i < n; i++) {
		if (pids[i] < 1)
			abort();
		for (size_t j = 0; j < i; j++)
			if (pids[i] == pids[j])
				abort(); /* each pid once */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct cgroup_events ev;
	char *copy, *nl;

	cgroup_parse_events(buf, size, &ev);
	cgroup_parse_oom_control(buf, size, &ev);
	check_stat(buf, size);
	check_procs(buf, size);
	check_value(buf, size, CGROUP_V1);
	check_value(buf, size, CGROUP_V2);

	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	nl = strchr(copy, '\n');
	if (nl) {
		*nl = '\0';
		/* "x within x" holds for any absolute path. */
		if (copy[0] == '/' && !cgroup_path_within(copy, copy))
			abort();
		cgroup_path_within(nl + 1, copy);
	}
	free(copy);
	return 0;
}
