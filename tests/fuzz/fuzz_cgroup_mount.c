/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for cgroup_parse_mountinfo() on bytes that are not
 * NUL-terminated, and for the translations of what it finds. Invariants:
 * the answer is untouched on failure, terminated and absolute on success;
 * a path mapped from the kernel's frame maps back to itself. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cgroup_mount.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_roundtrip(const char *root)
{
	struct cgroup_mount m;
	char ours[CGROUP_MOUNT_PATH_MAX], back[CGROUP_MOUNT_PATH_MAX];
	char k[CGROUP_MOUNT_PATH_MAX + 8];

	cgroup_mount_resolve(root, false, 1, &m);
	if (m.state != CGROUP_BASE_KNOWN)
		return;
	/* The mount's own path and one below it. */
	if (cgroup_mount_from_kernel(&m, m.base, ours, sizeof(ours)) != 0 ||
	    strcmp(ours, "/") != 0)
		abort();
	if (strlen(m.base) + 4 >= sizeof(back))
		return;
	snprintf(k, sizeof(k), "%s/a/b", strcmp(m.base, "/") ? m.base : "");
	if (cgroup_mount_from_kernel(&m, k, ours, sizeof(ours)) != 0 ||
	    strcmp(ours, "/a/b") != 0 ||
	    cgroup_mount_to_kernel(&m, ours, back, sizeof(back)) != 0 ||
	    strcmp(back, k) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = {"/sys/fs/cgroup/memory",
					    "/sys/fs/cgroup",
					    "/host/sys/fs/cgroup/memory/a"};
	char out[CGROUP_MOUNT_PATH_MAX];

	for (size_t i = 0; i < 3; i++) {
		struct cgroup_mount_query q = {.mode = i == 1 ? CGROUP_V2
							      : CGROUP_V1,
					       .mnt_id = -1,
					       .path = paths[i]};
		int r;

		memset(out, 'x', sizeof(out));
		r = cgroup_parse_mountinfo((const char *)data, size, &q, out,
					   sizeof(out));
		if (r < 0) {
			if (out[0] != 'x' || out[sizeof(out) - 1] != 'x')
				abort();
			continue;
		}
		if (!memchr(out, '\0', sizeof(out)) || out[0] != '/')
			abort();
		check_roundtrip(out);
	}
	return 0;
}
